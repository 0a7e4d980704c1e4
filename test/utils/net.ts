/** A loopback port that was free a moment ago: for a server to start on, or as an address nothing listens on. */
export { freePort } from '../../scripts/stack/process.js';
