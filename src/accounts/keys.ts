// API key format: `ahk_` + 40 base62 characters (~238 bits). Only the sha256
// is stored: keys are high-entropy, so a slow hash would buy nothing.
import { hash } from 'node:crypto';
import { randomId } from '../ids.js';

export const API_KEY_PREFIX = 'ahk_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomId(40);
}

export function hashSecret(value: string): string {
  // The one-shot hash: no Hash object per call (it runs on every API-key request).
  return hash('sha256', value, 'hex');
}

/** What a list may show of a key: its prefix and first characters. */
export function keyPreview(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6) + '…';
}
