// One throttled re-read, shared by the live lists (live_lists.js) and the Queues page
// (queues.js): gang events come in bursts (a cycle binds a hundred gangs at once), and each
// page needs only the state after the burst. gangschedRefresher({ms, url, apply}) returns a
// trigger: the first call reads url() at once (the leading edge), later calls within ms of the
// last read schedule one more read (the trailing edge), and a read never overlaps another
// (one still under way puts the next off by ms). apply(body) gets each answer's JSON; an
// answer that is not 2xx, or a failed fetch, is dropped: the next event reads again.
(function () {
  "use strict";
  window.gangschedRefresher = function (options) {
    var lastRead = 0, timer = null, fetching = false;

    function read() {
      timer = null;
      if (fetching) {
        timer = window.setTimeout(read, options.ms);
        return;
      }
      fetching = true;
      lastRead = Date.now();
      fetch(options.url(), { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (body) { if (body) options.apply(body); })
        .catch(function () {})
        .then(function () { fetching = false; });
    }

    return function trigger() {
      if (timer) return;
      timer = window.setTimeout(read, Math.max(0, lastRead + options.ms - Date.now()));
    };
  };
})();
