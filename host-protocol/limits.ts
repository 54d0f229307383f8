// The bounds the hub holds a host's frames to, in one place: its decoder's
// (codec.ts), its frame schemas' (frames.ts) and its transport's (src/hosts/ws.ts).
// A host that sends past any of them has its whole channel closed, so the host
// CLI clamps what it sends to these same numbers (src/host-cli/bounds.ts).

/** Largest frame a host may send (a run.message with big tool output); uWS closes the channel past it. */
export const FRAME_MAX_BYTES = 4 * 1024 * 1024;
/** Longest string in a frame, in UTF-8 bytes. */
export const STR_MAX_BYTES = 1_000_000;
/** Most items in one array, and keys in one map, of a frame. */
export const ARRAY_MAX_ITEMS = 10_000;
export const MAP_MAX_KEYS = 1_000;
/**
 * Deepest nesting of maps and arrays in a frame (the frame itself is 1; a tool input sits at 4), for
 * the decoder and the encoder alike. A real tool input is a few levels deep; thousands of levels
 * (≈ 10 KB) overflowed JSON.stringify's stack in the hub, and the Bus's encoder stops at 100.
 */
export const DEPTH_MAX = 64;
/** Most blocks in one run.message. */
export const BLOCKS_MAX = 500;
/** Longest model name, engine session id, tool name or tool id (characters). */
export const NAME_MAX_CHARS = 200;
/** Longest run.end error message (characters). */
export const ERROR_MAX_CHARS = 4000;
/** Frames per second the hub admits from one host by default (HOST_FRAMES_PER_SECOND; burst twice that, then close 4430). */
export const HOST_FRAMES_PER_SECOND_DEFAULT = 2000;
