// The connectivity probe, shared by the hub (`POST /model-configs/test`) and
// the host CLI (`model.test` frame). Node built-ins only: no hub dependencies.
export { probe, ask, type ProbeTarget, type ProbeResult, type FailReason, type ApiType, type AuthMode } from './probe.js';
export { refusal, type EgressPolicy } from './egress.js';
