import { Migration } from '@mikro-orm/migrations';

// Sessions, their normalized messages, the run tasks (one per user message:
// the queue and the run history at once) and idempotency records. PostgreSQL
// is the source of truth for the queue: a hub restart re-reads it.
export class SessionsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table sessions (
      id text primary key,
      user_id text not null references users(id) on delete cascade,
      agent_id text not null references agents(id) on delete cascade,
      agent_name text not null,
      title text not null,
      mode text not null default 'default',
      effort text not null default 'default',
      model text,
      engine_session_id text,
      running_task_id text,
      last_message text,
      last_msg_at timestamptz,
      last_active_at timestamptz,
      message_count int not null default 0,
      unread int not null default 0,
      next_seq int not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index sessions_user on sessions(user_id, last_msg_at desc nulls last)`);
    this.addSql(`create index sessions_agent on sessions(agent_id)`);
    this.addSql(`create table session_tasks (
      id text primary key,
      n bigserial not null unique,
      session_id text not null references sessions(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      agent_id text not null,
      host_id text not null,
      engine text not null,
      work_dir text not null,
      message_id text not null,
      status text not null check (status in ('queued','running','completed','failed','aborted','cancelled')),
      queue_reason text,
      mode text not null,
      effort text,
      input_tokens bigint not null default 0,
      output_tokens bigint not null default 0,
      model text,
      error_code text,
      error_message text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      ended_at timestamptz)`);
    this.addSql(`create index session_tasks_queued on session_tasks(host_id, n) where status = 'queued'`);
    this.addSql(`create index session_tasks_running on session_tasks(host_id) where status = 'running'`);
    this.addSql(`create index session_tasks_session on session_tasks(session_id, status)`);
    this.addSql(`create table session_messages (
      id text primary key,
      n bigserial not null unique,
      session_id text not null references sessions(id) on delete cascade,
      task_id text,
      role text not null,
      kind text not null check (kind in ('text','thinking','tool_use','tool_result')),
      content text,
      seq int not null,
      tool_name text,
      tool_id text,
      tool_input jsonb,
      tool_result jsonb,
      provider text not null,
      interrupted boolean not null default false,
      created_at timestamptz not null default now())`);
    this.addSql(`create index session_messages_session on session_messages(session_id, n)`);
    this.addSql(`create table session_idempotency (
      user_id text not null references users(id) on delete cascade,
      key text not null,
      body_hash text not null,
      response jsonb not null,
      created_at timestamptz not null default now(),
      primary key (user_id, key))`);
  }
}
