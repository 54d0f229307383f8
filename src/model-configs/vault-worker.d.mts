// Types of vault-worker.mjs (plain JavaScript so the worker loads without a TypeScript loader).
export function seal(key: Buffer, plaintext: string, aad?: string): string;
export function open(key: Buffer, sealed: string, aad?: string): string;
export default function vaultTask(task: { op: 'seal' | 'open'; key: Uint8Array; data: string; aad?: string }): string;
