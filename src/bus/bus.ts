// Fan-out between the parts of the hub, and between hub nodes. Topics are
// stable ids (`hostframes:<node>`, `session:<id>`, `auth`), never sockets. Payloads
// are MessagePack bytes; `publishObj`/`subscribeObj` do the encoding.
import { Encoder } from '@msgpack/msgpack';
import { nativeStringDecoder } from '../../host-protocol/native-strings.js';

export type BusHandler = (payload: Uint8Array) => void;

export interface Bus {
  /** Delivers to every subscriber of the topic on every node (including this one). */
  publish(topic: string, payload: Uint8Array): void;
  /** Returns the unsubscribe function. */
  subscribe(topic: string, handler: BusHandler): () => void;
  /** Resolves once every subscription made so far receives publishes from any node. */
  ready(): Promise<void>;
  /** False while the transport is down (Redis unreachable); the in-process bus is always up. */
  healthy(): boolean;
  /**
   * Calls `handler` whenever publishes may have been lost: after this node's connection to the
   * transport came back (its subscriptions active again), and when another node announces that its
   * own came back. Caches kept true by Bus invalidations resynchronise here. The in-process bus
   * never loses a publish and never calls it. Returns the unsubscribe function.
   */
  onReconnect(handler: () => void): () => void;
  close(): Promise<void>;
  readonly kind: 'local' | 'redis';
}

/**
 * One encoder and one decoder for every bus message (msgpack's encode()/decode() build one per call,
 * with a 2 KB buffer or a key cache), the decoder's strings decoded natively: a delta relayed to
 * another node is one bus message each. encode() returns a copy, so the shared buffer is never handed out.
 */
const encoder = new Encoder();
const decoder = nativeStringDecoder({});

export function publishObj(bus: Bus, topic: string, msg: unknown): void {
  bus.publish(topic, encoder.encode(msg));
}

export function subscribeObj<T>(bus: Bus, topic: string, handler: (msg: T) => void): () => void {
  return bus.subscribe(topic, (p) => handler(decoder.decode(p) as T));
}

/** A payload publishObj made (for a subscriber that reads some payloads another way). */
export function decodeObj<T>(payload: Uint8Array): T {
  return decoder.decode(payload) as T;
}
