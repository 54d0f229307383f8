// Host secrets. Pair keys (`ahp_…`, single use, short-lived) and host
// credentials (`ahh_…`, long-lived) are random, so only their sha256 is
// stored, like API keys.
import { randomId } from '../ids.js';
export { hashSecret } from '../accounts/keys.js';

export const PAIR_KEY_PREFIX = 'ahp_';
export const HOST_CREDENTIAL_PREFIX = 'ahh_';
/** How long a pair key may be exchanged (see docs/decisions.md, Hosts). */
export const PAIR_KEY_TTL_MS = 10 * 60 * 1000;

export const generatePairKey = () => PAIR_KEY_PREFIX + randomId(32);
export const generateHostCredential = () => HOST_CREDENTIAL_PREFIX + randomId(40);
