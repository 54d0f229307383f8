-- WAL per row inserted after a checkpoint, random primary keys against time-ordered ones
-- (docs/decisions.md: time-ordered run, message and ledger ids). Two tables of 1,000,000 rows shaped
-- like session_messages (text id, session, sequence number, 100 bytes of body), a checkpoint, then
-- 20,000 rows more into each; the first write of a page after a checkpoint logs the whole page, and
-- random keys land on a different leaf of the primary key almost every time.
--   createdb walids && psql -d walids -f bench/id-order-wal.sql && dropdb walids     (about 20 s)
\set QUIET on
create table r (id text primary key, session_id text, n bigserial, body text);
create table o (id text primary key, session_id text, n bigserial, body text);
create index on r (session_id, n);
create index on o (session_id, n);
insert into r (id, session_id, body)
  select 'msg_' || substr(md5(random()::text), 1, 21), 'ses_' || (g % 10000), repeat('x', 100) from generate_series(1, 1000000) g;
insert into o (id, session_id, body)
  select 'msg_' || lpad(to_hex(g), 9, '0') || substr(md5(random()::text), 1, 12), 'ses_' || (g % 10000), repeat('x', 100) from generate_series(1, 1000000) g;
vacuum analyze r;
vacuum analyze o;
checkpoint;
select pg_current_wal_lsn() as a \gset
insert into r (id, session_id, body)
  select 'msg_' || substr(md5(random()::text), 1, 21), 'ses_' || (g % 10000), repeat('x', 100) from generate_series(1, 20000) g;
select pg_current_wal_lsn() as b \gset
checkpoint;
select pg_current_wal_lsn() as c \gset
insert into o (id, session_id, body)
  select 'msg_' || lpad(to_hex(2000000 + g), 9, '0') || substr(md5(random()::text), 1, 12), 'ses_' || (g % 10000), repeat('x', 100) from generate_series(1, 20000) g;
select pg_current_wal_lsn() as d \gset
\set QUIET off
select round(pg_wal_lsn_diff(:'b', :'a') / 20000) as random_keys_wal_bytes_per_row,
       round(pg_wal_lsn_diff(:'d', :'c') / 20000) as time_ordered_keys_wal_bytes_per_row;
