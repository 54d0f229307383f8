// The environment of a guest's engine (a run of a user other than the agent's owner). agent-host's own
// environment is the owner's shell's: cloud keys, tokens, database URLs. A guest who can make the engine
// run a command (one the agent's project settings allow, a script it may edit) would read them all. A
// guest's engine gets what an engine needs to run — paths, user, locale, terminal, proxies and
// certificates, Claude Code's and Anthropic's own variables (the owner's endpoint key is in the run's
// settings anyway) — and what the owner lists in AGENT_HOST_GUEST_ENV. The owner's own runs keep it all.

const NAMES = new Set([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'COLORTERM', 'TZ', 'TMPDIR', 'TMP', 'TEMP',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy',
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CLAUDE_CONFIG_DIR', 'MAX_THINKING_TOKENS',
  // Where tools keep their own files; not XDG_RUNTIME_DIR (the user session's sockets: its bus, keyring and agents).
  'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME',
  // Windows: what a process needs to start at all.
  'SYSTEMROOT', 'SystemRoot', 'COMSPEC', 'PATHEXT', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'WINDIR', 'windir',
]);
const PREFIXES = ['LC_', 'ANTHROPIC_', 'CLAUDE_CODE_'];

/** The owner's list (AGENT_HOST_GUEST_ENV): comma- or space-separated names, `PREFIX*`, or `*` for everything. */
export function guestEnvList(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean);
}

/** `env` cut down to what a guest's engine gets: the engine's needs, then the owner's `extra` names and prefixes. */
export function guestEnv(env: NodeJS.ProcessEnv, extra: readonly string[] = []): NodeJS.ProcessEnv {
  const names = new Set<string>();
  const prefixes = [...PREFIXES];
  for (const raw of extra) {
    const e = raw.trim();
    if (!e) continue;
    if (e === '*') return { ...env };
    if (e.endsWith('*')) prefixes.push(e.slice(0, -1));
    else names.add(e);
  }
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (NAMES.has(k) || names.has(k) || prefixes.some((p) => k.startsWith(p)))) out[k] = v;
  }
  return out;
}
