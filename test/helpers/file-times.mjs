// A test reporter beside the spec reporter: each test file's wall time (its first event to its last),
// the slowest printed at the end, so a slower CI run says which files grew.
const SHOWN = 12;

export default async function* fileTimes(source) {
  const spans = new Map(); // file → [first seen, last seen] in ms
  for await (const event of source) {
    const file = event.data?.file;
    // The run's summary begins ("tests N"): every file is done. Said now, since --test-force-exit
    // ends the process before a reporter's last words after its source ends.
    if (event.type === 'test:diagnostic' && !file && event.data.nesting === 0 && event.data.message.startsWith('tests ')) yield summary(spans);
    if (!file || event.type === 'test:enqueue') continue; // enqueued: waiting for a slot, not yet running
    const now = Date.now();
    const span = spans.get(file);
    if (span) span[1] = now;
    else spans.set(file, [now, now]);
  }
}

/** One string, written at once, so the spec reporter's lines do not fall between its lines. */
function summary(spans) {
  const rows = [...spans].map(([file, [a, b]]) => [file.replace(/^.*\/test\//, 'test/'), (b - a) / 1000]).sort((x, y) => y[1] - x[1]);
  const lines = rows.slice(0, SHOWN).map(([file, s]) => `⏱ ${s.toFixed(1).padStart(6)} s  ${file}\n`);
  return `⏱ the slowest of ${rows.length} test files (wall time, from its start to its last result):\n${lines.join('')}`;
}
