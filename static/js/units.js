// How pages write resource amounts, shared by charts.js and queues.js (load it first): the same
// rules as scheduler_core.engine.quantity, whose tests pin them.
//   gangschedUnits.display(resource, value[, unit])  as read: bytes in the largest binary unit
//       the value reaches, CPU (canonical milli-CPU) in cores, three significant digits, counts
//       as integers: 250000Mi is "244Gi", 16500m is "16.5"  (display_quantity)
//   gangschedUnits.exact(resource, value)  as Kubernetes writes it, exactly: "250000Mi", "16500m"
//       (format_quantity), for hovers
//   gangschedUnits.unit(resource, value)  the unit display() picks ("Gi", or "" for CPU and
//       counts): a chart picks the one of its largest figure for its axis and legend alike
//   gangschedUnits.duration(seconds)  "45s", "10min", "1.5h"
//   gangschedUnits.ago(ms)  where a time axis starts: "-40s", "-12min", "-1.5h"
//   gangschedUnits.lineChart(svg, points, series, options)  the line charts of the overview and
//       the Queues page, drawn at the SVG's size on screen (text at its CSS size, never scaled
//       down): y ticks at round figures written by options.tick, x by the points' times from the
//       first drawn point to "now", the legend as a list under the chart (coloured swatches,
//       dark text: marks never overprint it).
(function () {
  "use strict";
  var BINARY = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"], DECIMAL = ["", "k", "M", "G", "T", "P", "E"];
  var DIGITS = 3;

  function isBytes(resource) {
    return ["memory", "ephemeral-storage", "storage"].indexOf(resource) >= 0 || /^hugepages-/.test(resource);
  }

  // value (>= 0) with at most DIGITS significant digits, whole part kept, trailing zeros dropped.
  function significant(value) {
    if (!value) return "0";
    var decimals;
    if (value >= 1) decimals = Math.max(DIGITS - String(Math.floor(value)).length, 0);
    else decimals = DIGITS - 1 - Math.floor(Math.log10(value));
    var text = value.toFixed(decimals);
    return decimals ? text.replace(/\.?0+$/, "") : text;
  }

  function unit(resource, value) {
    if (!isBytes(resource)) return "";
    var magnitude = Math.abs(Math.round(value || 0)), power = 0;
    while (power < BINARY.length - 1 && magnitude >= Math.pow(1024, power + 1)) power++;
    if (power < BINARY.length - 1 && Math.round(magnitude / Math.pow(1024, power)) >= 1024) power++;
    return BINARY[power];
  }

  function display(resource, value, forced) {
    value = Math.round(value || 0);
    var sign = value < 0 ? "-" : "", magnitude = Math.abs(value);
    if (resource === "cpu") return sign + significant(magnitude / 1000);
    if (!isBytes(resource)) return sign + String(magnitude);
    var u = forced === undefined ? unit(resource, magnitude) : forced;
    var text = significant(magnitude / Math.pow(1024, BINARY.indexOf(u)));
    return sign + text + (text === "0" ? "" : u);
  }

  function exact(resource, value) {
    value = Math.round(value || 0);
    var sign = value < 0 ? "-" : "", magnitude = Math.abs(value);
    if (resource === "cpu") return sign + (magnitude % 1000 === 0 ? String(magnitude / 1000) : magnitude + "m");
    if (!isBytes(resource) || !magnitude) return sign + String(magnitude);
    var base = magnitude % 1024 === 0 ? 1024 : 1000, units = base === 1024 ? BINARY : DECIMAL, power = 0;
    while (power < units.length - 1 && magnitude % Math.pow(base, power + 1) === 0) power++;
    return sign + magnitude / Math.pow(base, power) + units[power];
  }

  function duration(seconds) {
    seconds = Math.max(0, seconds || 0);
    if (seconds < 120) return Math.round(seconds) + "s";
    if (seconds < 7200) return Math.round(seconds / 60) + "min";
    return Math.round(seconds / 360) / 10 + "h";
  }

  var SVG = "http://www.w3.org/2000/svg";

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The smallest of 1, 2, 2.5, 5 times a power of ten that is at least x (> 0).
  function niceCeil(x) {
    var power = Math.pow(10, Math.floor(Math.log10(x)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * power >= x * (1 - 1e-9)) return steps[i] * power;
    return 10 * power;
  }

  // The top of a chart's axis for a largest figure `max` (> 0) of `resource` (a canonical
  // amount), round in the unit the figure is displayed in.
  function axisMax(resource, max) {
    if (resource === "cpu") return niceCeil(max / 1000) * 1000;
    var scale = isBytes(resource) ? Math.pow(1024, BINARY.indexOf(unit(resource, max))) : 1;
    var top = niceCeil(max / scale) * scale;
    return isBytes(resource) || resource === "%" ? top : Math.max(1, Math.ceil(top));
  }

  // How long before now the time axis starts, as durations are written everywhere ("-45s",
  // "-12min", "-1.5h"): a chart of its first minute reads "-40s", not "-0 min".
  function ago(ms) {
    return "-" + duration(ms / 1000);
  }

  function legendOf(svg) {
    var legend = svg.nextElementSibling;
    if (!legend || !legend.classList.contains("chart-legend")) {
      legend = document.createElement("ul");
      legend.className = "chart-legend";
      svg.parentNode.insertBefore(legend, svg.nextSibling);
    }
    while (legend.firstChild) legend.removeChild(legend.firstChild);
    return legend;
  }

  // series: [{key, color, value(point), label(lastPoint), title}]; options: {max: the least top
  // of the axis (in the series' values), resource: what the values are ("%" or a resource, for
  // round ticks), tick(value): an axis label}.
  function lineChart(svg, points, series, options) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var legend = legendOf(svg);
    if (!points.length) return;
    var box = svg.getBoundingClientRect();
    var W = Math.round(box.width) || 600, H = Math.round(box.height) || 160;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var max = options.max || 0;
    series.forEach(function (s) { points.forEach(function (p) { max = Math.max(max, s.value(p) || 0); }); });
    max = max > 0 ? axisMax(options.resource || "", max) : 1;
    var ticks = [0, max / 2, max].map(options.tick);
    var widest = Math.max.apply(null, ticks.map(function (t) { return t.length; }));
    var PAD = { l: 10 + 7 * widest, r: 12, t: 10, b: 22 };
    var times = points.map(function (p) { return Date.parse(p.t); });
    var first = times[0], last = times[times.length - 1], span = last - first;
    var x = function (i) {
      var f = span > 0 ? (times[i] - first) / span : (points.length < 2 ? 1 : i / (points.length - 1));
      return PAD.l + (W - PAD.l - PAD.r) * f;
    };
    var y = function (v) { return H - PAD.b - (H - PAD.t - PAD.b) * (v / max); };
    [0, 0.5, 1].forEach(function (f, n) {
      svg.appendChild(el("line", { x1: PAD.l, x2: W - PAD.r, y1: y(max * f), y2: y(max * f), "class": "grid" }));
      svg.appendChild(el("text", { x: PAD.l - 5, y: y(max * f) + 4, "text-anchor": "end" }, ticks[n]));
    });
    if (span > 0) svg.appendChild(el("text", { x: PAD.l, y: H - 6, "class": "time-start" }, ago(span)));
    svg.appendChild(el("text", { x: W - PAD.r, y: H - 6, "text-anchor": "end" }, "now"));
    series.forEach(function (s) {
      var d = points.map(function (p, i) { return (i ? "L" : "M") + x(i).toFixed(1) + "," + y(s.value(p) || 0).toFixed(1); }).join("");
      var newest = s.value(points[points.length - 1]) || 0;
      var path = el("path", { d: d, fill: "none", stroke: s.color, "stroke-width": 2, "data-series": s.key, "data-last": newest });
      if (s.title) path.appendChild(el("title", {}, s.title));
      svg.appendChild(path);
      // The newest point as a dot: a chart of one minute still shows where each figure is.
      svg.appendChild(el("circle", { cx: x(points.length - 1).toFixed(1), cy: y(newest).toFixed(1), r: 3, fill: s.color }));
      var item = document.createElement("li");
      item.setAttribute("data-series", s.key);
      var swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = s.color;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(s.label ? s.label(points[points.length - 1]) : s.key));
      if (s.title) item.title = s.title;
      legend.appendChild(item);
    });
  }

  window.gangschedUnits = { display: display, exact: exact, unit: unit, duration: duration, ago: ago,
                           isBytes: isBytes, axisMax: axisMax, lineChart: lineChart };
})();
