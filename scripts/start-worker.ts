import { boot } from './boot.js';

// `npm run start:worker`: the production job consumer; run as many as the load needs.
await boot('worker');
