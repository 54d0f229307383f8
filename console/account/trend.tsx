// The daily trend chart (uPlot, bundled; docs/decisions.md): tokens received and spent per day.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TrendParams, Trends } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading } from '../ui.js';
import { useLoad } from '../use-load.js';

function Chart(p: { data: Trends }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const box = el.current!;
    const pts = p.data.points;
    const plot = new uPlot(
      {
        width: Math.max(300, box.clientWidth),
        height: 220,
        series: [{}, { label: 'Received', stroke: '#1d6b34', width: 2 }, { label: 'Spent', stroke: '#a01c1c', width: 2 }],
        axes: [{}, { size: 60 }],
        scales: { x: { time: true } },
      },
      [pts.map((x) => Date.parse(x.date) / 1000), pts.map((x) => x.income), pts.map((x) => x.spent)],
      box,
    );
    return () => plot.destroy();
  }, [p.data]);
  return <div class="chart" ref={el} role="img" aria-label="Tokens received and spent per day" />;
}

export function TrendChart(p: { tick: number }) {
  const [range, setRange] = useState<NonNullable<TrendParams['range']>>('30d');
  const t = useLoad(() => client().billing.trends({ range }), [range, p.tick]);
  const quiet = t.data && t.data.points.every((x) => x.entries === 0);
  return (
    <section class="panel" aria-labelledby="trend-h">
      <h2 id="trend-h">Trend</h2>
      <label>Range <select value={range} onChange={(e) => setRange(e.currentTarget.value as typeof range)}>
        <option value="7d">7 days</option><option value="30d">30 days</option><option value="90d">90 days</option>
      </select></label>
      <ErrorBox error={t.error} />
      {!t.data && t.loading && <Loading />}
      {t.data && (quiet ? <Empty>No token movements in this range.</Empty> : <Chart data={t.data} />)}
      {t.data && !quiet && <p class="muted">In this range: received {t.data.totals.income.toLocaleString()}, spent {t.data.totals.spent.toLocaleString()}.</p>}
    </section>
  );
}
