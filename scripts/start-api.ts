import { boot } from './boot.js';

// `npm run start:api`: the production HTTP process (plus the outbox relay).
await boot('api');
