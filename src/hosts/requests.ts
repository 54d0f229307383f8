// Requests waiting for a host's reply, on the node that asked. One timer per
// request in flight (never per host); the reply arrives over the Bus from
// whichever node holds the host's channel.
import { fail, type HubError } from '../errors.js';
import { ReplyCodes } from '../../host-protocol/frames.js';

export interface ReplyMsg {
  rid: number;
  ok: boolean;
  data?: unknown;
  error?: string;
  /** A ReplyCodes value; 'offline' when no channel took the request, 'lost' when the channel closed after it went out. */
  code?: string;
}

const UNANSWERED = Symbol('unanswered');

/** The request went out to the host and no answer came back (silence, or its channel lost): the host may have done it. */
export function isUnanswered(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { [UNANSWERED]?: boolean })[UNANSWERED] === true;
}

function unanswered(e: HubError): HubError {
  return Object.assign(e, { [UNANSWERED]: true });
}

interface Waiting {
  resolve(data: unknown): void;
  reject(e: HubError): void;
  timer: NodeJS.Timeout;
  tooOld: boolean;
}

export class PendingRequests {
  private next = 0;
  private waiting = new Map<number, Waiting>();

  /** `tooOld`: silence means the host CLI predates the request (HOST_TOO_OLD) rather than HOST_TIMEOUT. */
  open(timeoutMs: number, tooOld: boolean): { rid: number; result: Promise<unknown> } {
    const rid = ++this.next;
    const result = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(rid);
        reject(unanswered(tooOld ? fail('HOST_TOO_OLD') : fail('HOST_TIMEOUT')));
      }, timeoutMs);
      timer.unref();
      this.waiting.set(rid, { resolve, reject, timer, tooOld });
    });
    return { rid, result };
  }

  settle(msg: ReplyMsg): void {
    const w = this.waiting.get(msg.rid);
    if (!w) return; // timed out already
    this.waiting.delete(msg.rid);
    clearTimeout(w.timer);
    if (msg.ok) return w.resolve(msg.data);
    w.reject(replyError(msg));
  }

  cancel(rid: number, e: HubError): void {
    const w = this.waiting.get(rid);
    if (!w) return;
    this.waiting.delete(rid);
    clearTimeout(w.timer);
    w.reject(e);
  }

  close(): void {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(fail('UNAVAILABLE', 'hub shutting down'));
    }
    this.waiting.clear();
  }
}

/** One place mapping a host's refusal to the error catalogue. */
function replyError(msg: ReplyMsg): HubError {
  const text = msg.error ? msg.error.slice(0, 500) : undefined;
  switch (msg.code) {
    case 'offline':
      return fail('HOST_OFFLINE');
    case 'lost':
      return unanswered(fail('HOST_OFFLINE'));
    case ReplyCodes.UNSUPPORTED:
      return fail('HOST_TOO_OLD');
    case ReplyCodes.NOT_FOUND:
      return fail('NOT_FOUND', text ?? 'not found on the host');
    case ReplyCodes.INVALID:
      return fail('VALIDATION', text ?? 'the host refused the request');
    default:
      return fail('CONFLICT', text ?? 'the host could not do it');
  }
}
