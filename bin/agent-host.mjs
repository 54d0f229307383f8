#!/usr/bin/env node
// `agent-host` on PATH (npm link) or through npx in this checkout: runs the
// CLI from its TypeScript source with tsx (a dependency), no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/host-cli/main.ts');
