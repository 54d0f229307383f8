// Administration (administrators only): the review queue, users, redemptions.
import { useState } from 'preact/hooks';
import { ReviewQueue } from './review.js';
import { UserList } from './users.js';
import { RedeemQueue } from './redeems.js';

const TABS = [
  { key: 'review', label: 'Review queue' },
  { key: 'users', label: 'Users' },
  { key: 'redeems', label: 'Redemptions' },
] as const;

export function Admin() {
  const [tab, setTab] = useState<(typeof TABS)[number]['key']>('review');
  return (
    <section>
      <h1>Administration</h1>
      <div class="tabs" role="group" aria-label="Sections">
        {TABS.map((t) => <button type="button" key={t.key} aria-pressed={tab === t.key} onClick={() => setTab(t.key)}>{t.label}</button>)}
      </div>
      {tab === 'review' && <ReviewQueue />}
      {tab === 'users' && <UserList />}
      {tab === 'redeems' && <RedeemQueue />}
    </section>
  );
}
