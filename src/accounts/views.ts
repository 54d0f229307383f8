import type { ApiKey, User } from './entities.js';

export function userView(u: User) {
  return {
    id: u.id,
    name: u.name,
    role: u.role,
    email: u.email,
    phone: u.phone ? maskPhone(u.phone) : null,
    balance: u.balance,
    planId: u.planId,
    planExpireAt: u.planExpireAt ? u.planExpireAt.getTime() : null,
    createdAt: u.createdAt.toISOString(),
  };
}

export function keyView(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    preview: k.preview,
    lastUsedAt: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
    createdAt: k.createdAt.toISOString(),
    updatedAt: k.updatedAt.toISOString(),
  };
}

export function maskPhone(p: string): string {
  return p.length <= 4 ? '****' : `${p.slice(0, 3)}****${p.slice(-4)}`;
}
