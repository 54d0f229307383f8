// Permission modes and the owner's ceiling for other users (issue 10, hole 1).
// A session's mode becomes the engine's permission flag on the owner's machine
// (host-cli/runner.ts): `auto` skips every permission prompt. The agent's owner
// sets `maxGuestMode`, the most permissive mode anyone else may use; the owner
// may use every mode. Pure rules, no I/O: the one place this is decided.

/** From the least to the most permissive. */
export const MODES = ['plan', 'default', 'accept-edits', 'auto'] as const;
export type Mode = (typeof MODES)[number];

/** A new agent lets other users use `default` and `plan` only. */
export const DEFAULT_GUEST_MODE: Mode = 'default';

const rank = (m: string): number => MODES.indexOf(m as Mode);

export const isMode = (m: unknown): m is Mode => typeof m === 'string' && rank(m) >= 0;

/** Who uses the agent, and the agent's owner and ceiling. */
export interface ModeFacts {
  ownerId: string;
  maxGuestMode: string;
}

/** The ceiling for this user: none (the most permissive mode) for the owner; an unknown ceiling counts as the lowest. */
export function ceilingFor(a: ModeFacts, userId: string): Mode {
  if (a.ownerId === userId) return 'auto';
  return isMode(a.maxGuestMode) ? a.maxGuestMode : 'plan';
}

/** Whether `userId` may ask for `mode` on this agent. */
export const modeAllowed = (a: ModeFacts, userId: string, mode: string): boolean => isMode(mode) && rank(mode) <= rank(ceilingFor(a, userId));

/** The mode a run goes out with: the one asked for, lowered to the user's ceiling (unknown → the lowest). */
export function capMode(a: ModeFacts, userId: string, mode: string): Mode {
  const c = ceilingFor(a, userId);
  if (!isMode(mode)) return 'plan';
  return rank(mode) <= rank(c) ? mode : c;
}

/** A new session's mode when none is asked for: `default`, or the ceiling when that is lower (`plan`). */
export const defaultModeFor = (a: ModeFacts, userId: string): Mode => capMode(a, userId, 'default');
