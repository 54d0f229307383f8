// The CLI's version, from package.json (two levels up both from src/host-cli and dist/host-cli).
import { createRequire } from 'node:module';

function read(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export const CLI_VERSION = read();
