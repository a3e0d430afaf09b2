import { boot } from './boot.js';

// `npm start`: API and worker in one process. With nothing configured: the embedded profile.
await boot('all');
