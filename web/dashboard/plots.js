// Tandem operations dashboard: the plots of the last minutes or hours, drawn with uPlot (MIT
// licence, /dashboard/vendor/uPlot.LICENSE.txt) from GET /v1/tandem/series. dashboard.js owns
// the polling and the API key; this file turns one series document into the plots and keeps
// them as wide as their panels. Nothing here builds HTML from data: labels are set as text,
// and uPlot draws on canvases.
'use strict';

window.TandemPlots = (() => {
  const WINDOW_STORAGE = 'tandem.dashboard.plotWindow';
  const DEFAULT_WINDOW_S = 3600;
  const HEIGHT = 190;
  const PHONE_HEIGHT = 160;
  const TIERS = ['edge', 'cloud', 'human', 'none'];
  const LATENCY_TIERS = ['edge', 'cloud', 'human'];
  const CLIENT_COLORS = ['#d6336c', '#7048e8', '#f08c00', '#0c8599', '#5c940d'];

  const $ = (id) => document.getElementById(id);
  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const color = (tier) => css(`--${tier}`) || '#888';
  const plotHeight = () => (window.matchMedia('(max-width: 700px)').matches ? PHONE_HEIGHT : HEIGHT);

  // ----------------------------------------------------------------------------------------
  // Number formats on the axes and in the legends

  const fmtRate = (v) => (isNum(v) ? (v >= 10 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1)) : '—');
  const fmtPct = (v) => (isNum(v) ? `${(v * 100).toFixed(0)}%` : '—');
  const fmtMs = (v) => {
    if (!isNum(v)) return '—';
    if (v >= 60000) return `${(v / 60000).toFixed(1)} min`;
    if (v >= 1000) return `${(v / 1000).toFixed(v >= 10000 ? 0 : 1)} s`;
    return `${v >= 10 ? v.toFixed(0) : v.toPrecision(2)} ms`;
  };
  const fmtUsd = (v) => {
    if (!isNum(v)) return '—';
    if (v === 0) return '$0';
    return Math.abs(v) >= 0.01 ? `$${v.toFixed(2)}` : `$${v.toPrecision(2)}`;
  };
  const fmtTps = (v) => (isNum(v) ? v.toFixed(0) : '—');
  // Labels of the splits an axis shows; a split filtered out (null) gets none.
  const axisValues = (fmt) => (u, splits) => splits.map((v) => (v === null ? '' : fmt(v)));
  // Times as the rest of the page writes them (24-hour clock), with seconds only where a tick
  // falls between whole minutes.
  const clock = (s, seconds) => new Date(s * 1000).toLocaleTimeString('en-GB', {
    hour12: false, hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}),
  });
  const timeValues = (u, splits) => {
    const seconds = splits.some((v) => isNum(v) && v % 60 !== 0);
    return splits.map((v) => (isNum(v) ? clock(v, seconds) : ''));
  };
  // A y axis as wide as its longest label (12 px system font: at most 8 px a character), its
  // gap and its ticks.
  const axisSize = (u, values) => Math.max(40, (values ?? []).reduce((n, v) => Math.max(n, String(v ?? '').length), 0) * 8 + 22);
  // On a log scale only the powers of ten get a label and a grid line: the 2..9 between them
  // crowd the axis.
  const decades = (u, splits) => splits.map((v) => (Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9 ? v : null));

  // ----------------------------------------------------------------------------------------
  // What each plot shows: its series (label, colour, dash) and how a document fills them.

  const line = (label, stroke, extra = {}) => ({ label, stroke, width: 1.6, ...extra });
  const dashed = [5, 4];
  // Sparse series (percentiles, readings) show their points: an isolated bucket is otherwise
  // invisible between gaps.
  const dots = { points: { show: true, size: 4 } };

  const perMinute = (doc, counts) => (Array.isArray(counts)
    ? counts.map((n) => (isNum(n) ? (n * 60) / doc.step_s : null)) : []);
  const cumulative = (values) => {
    let sum = 0;
    return (Array.isArray(values) ? values : []).map((v) => {
      sum += isNum(v) ? v : 0;
      return sum;
    });
  };

  const PLOTS = [
    {
      id: 'requests',
      fmt: fmtRate,
      series: () => [
        ...TIERS.map((t) => line(t, color(t), t === 'none' ? { dash: dashed } : {})),
        line('escalation rate', css('--accent'), { scale: '%', dash: [2, 3], value: (u, v) => fmtPct(v), ...dots }),
      ],
      axes: () => [{ scale: '%', side: 1, values: axisValues(fmtPct), grid: { show: false } }],
      scales: { '%': { range: [0, 1] } },
      data: (doc) => [...TIERS.map((t) => perMinute(doc, doc.requests?.[t])), doc.escalation_rate],
    },
    {
      id: 'latency',
      fmt: fmtMs,
      log: true,
      series: () => LATENCY_TIERS.flatMap((t) => [
        line(`${t} p50`, color(t), dots),
        line(`${t} p95`, color(t), { dash: dashed, ...dots }),
      ]),
      data: (doc) => LATENCY_TIERS.flatMap((t) => [doc.latency_ms?.[t]?.p50, doc.latency_ms?.[t]?.p95]),
    },
    {
      id: 'ttft',
      fmt: fmtMs,
      log: true,
      series: () => LATENCY_TIERS.flatMap((t) => [
        line(`${t} p50`, color(t), dots),
        line(`${t} p95`, color(t), { dash: dashed, ...dots }),
      ]),
      data: (doc) => LATENCY_TIERS.flatMap((t) => [doc.ttft_ms?.[t]?.p50, doc.ttft_ms?.[t]?.p95]),
    },
    {
      id: 'decode',
      fmt: fmtTps,
      series: () => [
        line('decode tok/s', color('edge'), { spanGaps: true, ...dots }),
        line('baseline', css('--muted'), { dash: dashed, spanGaps: true }),
      ],
      data: (doc) => [doc.decode_tokens_per_s?.ewma, doc.decode_tokens_per_s?.baseline],
    },
    {
      id: 'cost',
      fmt: fmtUsd,
      series: () => [
        line('spend', color('cloud'), { fill: `${color('cloud')}22` }),
        line('saved', css('--good'), { fill: `${css('--good')}22` }),
      ],
      data: (doc) => [cumulative(doc.cost_usd?.spend), cumulative(doc.cost_usd?.saved)],
    },
    {
      id: 'cloud',
      fmt: fmtPct,
      series: () => [line('cloud reachable', color('cloud'), { spanGaps: true, fill: `${color('cloud')}22` })],
      scales: { y: { range: [0, 1.05] } },
      data: (doc) => [doc.cloud_available],
    },
    {
      id: 'gaming',
      fmt: fmtPct,
      // One line per flagged client, so the series change with the report (see setData below).
      series: (doc) => [
        line('all routed', css('--muted'), { dash: dashed, spanGaps: true }),
        ...(doc.gaming?.clients ?? []).map((c, i) => line(String(c.client), CLIENT_COLORS[i % CLIENT_COLORS.length], dots)),
      ],
      scales: { y: { range: [0, 1.05] } },
      data: (doc) => [doc.gaming?.routed_cloud_share, ...(doc.gaming?.clients ?? []).map((c) => c.escalation_share)],
    },
  ];

  // ----------------------------------------------------------------------------------------
  // Drawing

  const charts = new Map();  // plot id -> {uplot, key}

  // The x range: the window, but not before the gateway started (it kept nothing then), and at
  // least five minutes, so a young gateway's traffic is not a spike at the right edge.
  const MIN_SPAN_S = 300;
  let startedS = null;
  const xRange = (u, min, max) => [isNum(startedS) ? Math.max(min, Math.min(startedS, max - MIN_SPAN_S)) : min, max];

  function options(plot, doc, width) {
    const muted = css('--muted');
    const grid = css('--border');
    const axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const yAxis = plot.log
      ? { ...axis, filter: decades, grid: { ...axis.grid, filter: decades }, ticks: { ...axis.ticks, filter: decades } }
      : axis;
    const series = plot.series(doc).map((s) => ({
      value: (u, v) => plot.fmt(v),
      ...s,
    }));
    return {
      width,
      height: plotHeight(),
      cursor: { points: { size: 6 } },
      legend: { live: true },
      scales: {
        x: { time: true, range: xRange },
        y: plot.log ? { distr: 3 } : { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
        ...(plot.scales || {}),
      },
      axes: [
        // At most about a dozen times on an axis, however wide the plot.
        { ...axis, values: timeValues, space: (u, i, min, max, dim) => Math.max(46, dim / 12) },
        { ...yAxis, values: axisValues(plot.fmt), size: axisSize },
        ...(plot.axes ? plot.axes().map((a) => ({ ...axis, ...a, stroke: muted, size: axisSize })) : []),
      ],
      series: [{ value: (u, v) => (isNum(v) ? clock(v, true) : '—') }, ...series],
    };
  }

  // The data uPlot takes: times first, then one array per series, each as long as the times.
  function columns(plot, doc) {
    const t = Array.isArray(doc.t) ? doc.t : [];
    const fit = (values) => t.map((_, i) => (Array.isArray(values) && isNum(values[i]) ? values[i] : null));
    // A log scale cannot show zero: a latency of 0 ms (never measured as such) becomes a gap.
    const positive = (values) => values.map((v) => (plot.log && v !== null && v <= 0 ? null : v));
    return [t, ...plot.data(doc).map((values) => positive(fit(values)))];
  }

  function draw(plot, doc) {
    const holder = $(`plot-${plot.id}`);
    if (!holder) return;
    const data = columns(plot, doc);
    // Charts are made again only when their series change (the flagged clients do).
    const key = plot.series(doc).map((s) => s.label).join('\n');
    let chart = charts.get(plot.id);
    if (!chart || chart.key !== key) {
      chart?.uplot.destroy();
      chart = { uplot: new uPlot(options(plot, doc, holder.clientWidth), data, holder), key };
      charts.set(plot.id, chart);
    } else {
      chart.uplot.setData(data);
    }
    // For tests and curious operators: how many values the plot holds.
    holder.dataset.points = String(data[0].length);
    holder.dataset.values = String(data.slice(1).reduce((n, s) => n + s.filter((v) => v !== null && v !== 0).length, 0));
  }

  // Only when a panel's width or the plot height changed: resizing a canvas must not feed the
  // observer that called it (a ResizeObserver loop).
  function resizeAll() {
    for (const [id, chart] of charts) {
      const holder = $(`plot-${id}`);
      const size = { width: holder ? holder.clientWidth : 0, height: plotHeight() };
      if (size.width > 0 && (size.width !== chart.uplot.width || size.height !== chart.uplot.height)) {
        chart.uplot.setSize(size);
      }
    }
  }

  // ----------------------------------------------------------------------------------------
  // The window the operator picks, kept for the tab's session

  let windowS = DEFAULT_WINDOW_S;
  try {
    windowS = Number(sessionStorage.getItem(WINDOW_STORAGE)) || DEFAULT_WINDOW_S;
  } catch {
    windowS = DEFAULT_WINDOW_S;  // storage disabled
  }

  function showWindow() {
    for (const b of document.querySelectorAll('#plot-windows button')) {
      b.setAttribute('aria-pressed', String(Number(b.dataset.window) === windowS));
    }
  }

  function render(doc) {
    if (!doc || !Array.isArray(doc.t)) return;
    startedS = isNum(doc.started_s) ? doc.started_s : null;
    for (const plot of PLOTS) draw(plot, doc);
    const section = $('plots');
    section.dataset.window = String(doc.window_s);
    const gaming = doc.gaming || {};
    const note = $('plot-gaming-note');
    note.textContent = gaming.enabled === false ? 'Gaming detection is off.'
      : (gaming.clients ?? []).length === 0 ? 'No flagged clients: the line is all routed traffic.'
        : `${gaming.flagged} flagged; the worst ${gaming.clients.length} shown.`;
    $('plots-step').textContent = isNum(doc.step_s) ? `${doc.step_s} s per point · kept ${doc.retention_s / 3600} h` : '';
  }

  // `onWindow` runs when the operator picks another window (dashboard.js fetches at once).
  function init(onWindow) {
    for (const b of document.querySelectorAll('#plot-windows button')) {
      b.addEventListener('click', () => {
        windowS = Number(b.dataset.window);
        try {
          sessionStorage.setItem(WINDOW_STORAGE, String(windowS));
        } catch {
          // storage disabled: the choice lasts until the page reloads
        }
        showWindow();
        onWindow();
      });
    }
    showWindow();
    // Plots follow their panel's width: the grid reflows on every resize and rotation.
    new ResizeObserver(() => requestAnimationFrame(resizeAll)).observe($('plots'));
  }

  return { init, render, windowSeconds: () => windowS };
})();
