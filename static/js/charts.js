// The overview's two line charts (inline SVG, no library): utilisation per resource and
// pending/running gangs over the last hour. Data comes from <script id="chart-data">, rendered
// by the server; window.gangschedCharts.push(point) lets the live layer append a point.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var W = 600, H = 160, PAD = { l: 34, r: 8, t: 8, b: 18 };
  var COLORS = ["#1c7ed6", "#2f9e44", "#e8590c", "#ae3ec9", "#e03131"];

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function draw(svg, points, series, fixedMax) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!points.length) return;
    var max = fixedMax || 1;
    series.forEach(function (s) {
      points.forEach(function (p) { max = Math.max(max, s.value(p) || 0); });
    });
    var x = function (i) { return PAD.l + (W - PAD.l - PAD.r) * (points.length < 2 ? 0 : i / (points.length - 1)); };
    var y = function (v) { return H - PAD.b - (H - PAD.t - PAD.b) * (v / max); };
    [0, 0.5, 1].forEach(function (f) {
      var v = max * f;
      svg.appendChild(el("line", { x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v), stroke: "#e9ecef" }));
      svg.appendChild(el("text", { x: 2, y: y(v) + 3 }, String(Math.round(v))));
    });
    svg.appendChild(el("text", { x: PAD.l, y: H - 4 }, "-60 min"));
    svg.appendChild(el("text", { x: W - PAD.r - 24, y: H - 4 }, "now"));
    series.forEach(function (s, n) {
      var d = points.map(function (p, i) { return (i ? "L" : "M") + x(i).toFixed(1) + "," + y(s.value(p) || 0).toFixed(1); }).join("");
      svg.appendChild(el("path", { d: d, fill: "none", stroke: COLORS[n % COLORS.length], "stroke-width": 1.8 }));
      svg.appendChild(el("text", { x: PAD.l + 6 + n * 110, y: PAD.t + 8, fill: COLORS[n % COLORS.length] }, s.name));
    });
  }

  function render(data) {
    var util = document.getElementById("chart-util");
    var gangs = document.getElementById("chart-gangs");
    if (util) {
      draw(util, data.points, data.resources.map(function (r) {
        return { name: r, value: function (p) { return p.util[r]; } };
      }), 100);
    }
    if (gangs) {
      draw(gangs, data.points, [
        { name: "pending", value: function (p) { return p.pending; } },
        { name: "running", value: function (p) { return p.running; } },
      ]);
    }
  }

  function start() {
    var source = document.getElementById("chart-data");
    if (!source) return;
    var data = JSON.parse(source.textContent);
    render(data);
    window.gangschedCharts = {
      data: data,
      push: function (point) {
        data.points.push(point);
        if (data.points.length > 60) data.points.shift();
        render(data);
      },
    };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
