// Applies model settings to an engine's settings file on the host. OWNED BY the model-configs work (issue 5).
// Contract used by the CLI's connection (hosts work, issue 3):
import type { FrameOf, HubToHost } from '../../host-protocol/frames.js';

export type SettingsConfig = FrameOf<HubToHost, 'settings.apply'>['config'];

export interface SettingsOptions {
  /** $CLAUDE_CONFIG_DIR, default ~/.claude */
  claudeConfigDir: string;
}

/** config = null reverts to the default. Resolves with a small summary for the reply's data; throws on failure. */
export async function applySettings(engine: string, config: SettingsConfig, opts: SettingsOptions): Promise<{ applied: boolean; reverted?: boolean }> {
  void engine; void config; void opts;
  throw new Error('settings not implemented yet (issue 5)');
}
