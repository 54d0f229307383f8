// The agent write limits (SPEC "Limits", checked by src/agents/schemas.ts
// AgentWrite; test/console.test.ts keeps the two equal), shown beside fields.
export const LIMITS = {
  name: { min: 1, max: 80 },
  displayName: { min: 1, max: 80 },
  desc: { min: 0, max: 1000 },
  cat: { min: 0, max: 50 },
  workDir: { min: 0, max: 500 },
  expectedInput: { min: 0, max: 500 },
  expectedOutput: { min: 0, max: 500 },
  tags: { maxItems: 20, min: 1, max: 30 },
  aiFillText: { min: 1, max: 2000 },
} as const;

/** Tags typed as one comma-separated line. */
export const splitTags = (s: string): string[] => s.split(',').map((t) => t.trim()).filter(Boolean);

/** What is wrong with the tags, in words, or undefined. */
export function tagsProblem(tags: string[]): string | undefined {
  if (tags.length > LIMITS.tags.maxItems) return `at most ${LIMITS.tags.maxItems} tags (now ${tags.length})`;
  const long = tags.find((t) => t.length > LIMITS.tags.max);
  if (long) return `“${long.slice(0, 40)}…” is longer than ${LIMITS.tags.max} characters`;
  return undefined;
}

/** workDir: relative, no `..` (the hub's rule, src/agents/rules.ts checkWorkDir). */
export function workDirProblem(w: string): string | undefined {
  if (w === '') return undefined;
  if (/^[/\\~]/.test(w) || /^[A-Za-z]:/.test(w)) return 'must be a relative path';
  if (w.split(/[/\\]+/).some((seg) => seg === '..')) return 'must not contain “..”';
  return undefined;
}
