// Phone binding: one-time codes (6 digits, HMAC-hashed, 10-minute life, at
// most 5 wrong tries, one resend per minute) sent through an SmsSender. The
// same codes serve as the step-up `verifyToken` of card reveals for accounts
// with a bound phone.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import type { SmsSender } from './sms.js';
import type { Limiter } from '../ratelimit/limiter.js';
import { User } from './entities.js';

export const CODE_TTL_MS = 10 * 60_000;
export const RESEND_AFTER_S = 60;
export const MAX_ATTEMPTS = 5;
export const DEFAULT_COUNTRY_CODE = '+86';
/** Codes one number is sent in an hour, whoever asks (each account's own limits bound one account only). */
export const SMS_PER_NUMBER_PER_HOUR = 10;

export function normalizeCountryCode(cc: string | undefined): string {
  if (!cc) return DEFAULT_COUNTRY_CODE;
  return cc.startsWith('+') ? cc : '+' + cc;
}

/**
 * One number however it is spelled: the digits of country code and number, each without leading zeros
 * (`+0086` and `86` are `+86`; a trunk `0` before the number is dialled away; `+8 613…` is `+86 13…`).
 */
export const numberKey = (countryCode: string, phone: string) => countryCode.replace(/^\+?0*/, '') + phone.replace(/^0+/, '');

type Verdict = 'ok' | 'none' | 'locked' | 'wrong';

export class PhoneCodes {
  constructor(
    private readonly ctx: HubContext,
    private readonly sms: SmsSender | undefined,
    /** The hub's rate limiter (shared across nodes with Redis): a number's codes an hour. */
    private readonly limiter?: Limiter,
  ) {}

  private hash(userId: string, cc: string, phone: string, code: string): string {
    return createHmac('sha256', this.ctx.secrets.jwtKey).update(`phone|${userId}|${cc}|${phone}|${code}`).digest('hex');
  }

  async send(userId: string, phone: string, countryCode: string) {
    if (!this.sms) throw fail('NOT_CONFIGURED', 'SMS delivery is not configured (SMS_WEBHOOK_URL)');
    const em = this.ctx.em();
    // A number bound to another account is answered as any other: telling it here, before a code proves
    // the caller holds the phone, told anyone which numbers have an account. Bind refuses it (409) after the code.
    // Per number: changing a bound phone takes a code of each (bind); the hourly limit bounds them all.
    const last = await em.execute(`select extract(epoch from now() - max(created_at))::float8 as age from phone_codes where user_id = ? and country_code = ? and phone = ?`, [userId, countryCode, phone]);
    const age = last[0]?.age;
    if (age !== null && age !== undefined && age < RESEND_AFTER_S) {
      const wait = Math.ceil(RESEND_AFTER_S - age);
      throw fail('RATE_LIMITED', `a code was sent less than ${RESEND_AFTER_S} s ago; retry in ${wait} s`, { 'Retry-After': String(wait) });
    }
    // The number's own account is not counted with strangers: they could spend its quota and keep the owner from
    // its step-up codes for as long as they liked (its own codes are bound by the account's limits).
    const own = this.limiter ? await em.findOne(User, { id: userId, phone, countryCode }) : null;
    if (this.limiter && !own) {
      // Many accounts together sent one number as many texts as they liked (a flood, each text paid for).
      const v = await this.limiter.hit([{ key: `rl:sms-to:${numberKey(countryCode, phone)}`, limit: SMS_PER_NUMBER_PER_HOUR, windowMs: 3_600_000 }]);
      if (!v.allowed) {
        const wait = String(Math.max(1, Math.ceil((v.states[0]?.resetMs ?? 3_600_000) / 1000)));
        throw fail('RATE_LIMITED', `this number was sent ${SMS_PER_NUMBER_PER_HOUR} codes in the last hour; retry later`, { 'Retry-After': wait });
      }
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = newId('pcd');
    const expiresAt = new Date(Date.now() + CODE_TTL_MS);
    // Only the newest code of a number is valid; the account's expired codes of other numbers go too.
    await em.execute(`delete from phone_codes where user_id = ? and ((country_code = ? and phone = ?) or expires_at <= now())`, [userId, countryCode, phone]);
    await em.execute(
      `insert into phone_codes (id, user_id, country_code, phone, code_hash, expires_at) values (?, ?, ?, ?, ?, ?)`,
      [id, userId, countryCode, phone, this.hash(userId, countryCode, phone, code), expiresAt],
    );
    try {
      await this.sms.send({ countryCode, phone, code, text: `Your Agent Hub verification code is ${code}. It expires in 10 minutes.` });
    } catch (e) {
      await em.execute(`delete from phone_codes where id = ?`, [id]);
      this.ctx.log.warn('SMS delivery failed', { err: e instanceof Error ? e.message : String(e) });
      throw fail('UNAVAILABLE', 'the SMS relay did not accept the message; try again later');
    }
    return { sent: true, countryCode, expiresAt: expiresAt.toISOString(), resendAfterSeconds: RESEND_AFTER_S };
  }

  /** Checks a code and consumes it on success (kept with `keep`); a wrong code uses up one attempt. */
  async consume(userId: string, countryCode: string, phone: string, code: string, keep = false): Promise<Verdict> {
    const em = this.ctx.em();
    const rows = await em.execute(
      `select id, code_hash, attempts from phone_codes where user_id = ? and country_code = ? and phone = ? and expires_at > now() order by created_at desc limit 1`,
      [userId, countryCode, phone],
    );
    if (!rows.length) return 'none';
    const row = rows[0];
    if (row.attempts >= MAX_ATTEMPTS) return 'locked';
    const want = Buffer.from(row.code_hash, 'hex');
    const got = Buffer.from(this.hash(userId, countryCode, phone, code), 'hex');
    if (!timingSafeEqual(want, got)) {
      // Conditional on the attempt count seen, so parallel guesses cannot exceed the limit.
      const upd = await em.execute(`update phone_codes set attempts = attempts + 1 where id = ? and attempts < ? returning attempts`, [row.id, MAX_ATTEMPTS]);
      return upd.length ? 'wrong' : 'locked';
    }
    if (keep) return 'ok';
    const del = await em.execute(`delete from phone_codes where id = ? and attempts < ? returning id`, [row.id, MAX_ATTEMPTS]);
    return del.length ? 'ok' : 'locked';
  }

  /**
   * Binds the number the code was sent to. Over another bound number it also needs `verifyToken`, a
   * fresh code of that one (the step-up below): else a stolen API key could move the step-up of card
   * reveals to the thief's phone.
   */
  async bind(userId: string, phone: string, countryCode: string, code: string, verifyToken?: string) {
    const u = await this.ctx.em().findOne(User, { id: userId });
    const over = !!u?.phone && (u.phone !== phone || u.countryCode !== countryCode);
    if (over && !verifyToken) throw fail('FORBIDDEN', 'verifyToken required: a phone is bound; send a code to it (POST /api/v1/me/phone/send-code) and pass it to bind another number');
    // The new number's code is checked first and spent last: a wrong one leaves the current phone's code unspent.
    const v = await this.consume(userId, countryCode, phone, code, over);
    if (v === 'none') throw fail('VALIDATION', 'no valid code for this phone number; request one first');
    if (v === 'locked') throw fail('VALIDATION', 'too many wrong codes; request a new one');
    if (v === 'wrong') throw fail('VALIDATION', 'body/code: wrong code');
    if (over) {
      await this.stepUp(userId, verifyToken);
      if ((await this.consume(userId, countryCode, phone, code)) !== 'ok') throw fail('VALIDATION', 'no valid code for this phone number; request one first');
    }
    try {
      await this.ctx.em().execute(`update users set phone = ?, country_code = ?, updated_at = now() where id = ?`, [phone, countryCode, userId]);
    } catch (e) {
      if (e instanceof UniqueConstraintViolationException) throw fail('CONFLICT', 'this phone number is bound to another account');
      throw e;
    }
  }

  /**
   * Step-up check before secrets are shown: an account with a bound phone
   * must present a fresh code sent to that phone as `verifyToken`; an account
   * without one has no second factor to ask for.
   */
  async stepUp(userId: string, verifyToken: string | undefined): Promise<void> {
    const u = await this.ctx.em().findOne(User, { id: userId });
    if (!u || !u.phone || !u.countryCode) return;
    if (!verifyToken) throw fail('FORBIDDEN', 'verifyToken required: send a code to your bound phone (POST /api/v1/me/phone/send-code) and pass it');
    const v = await this.consume(userId, u.countryCode, u.phone, verifyToken);
    if (v !== 'ok') throw fail('FORBIDDEN', v === 'locked' ? 'too many wrong codes; request a new one' : 'verifyToken is wrong or expired');
  }
}
