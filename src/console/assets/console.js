/*
 * The Pictor console's one script (served by the console itself; its
 * Content-Security-Policy allows no other). It draws the charts of the spend
 * page with Chart.js, and keeps the jobs page live with Server-Sent Events.
 * Everything the server sends is written into the page as text, never as HTML.
 */
/* global Chart, CSS, document, getComputedStyle, EventSource, HTMLImageElement */
'use strict';

(function () {
  var SURFACE_COLORS = { discord: '#4752c4', slack: '#7c3085', cli: '#1f7a4d', n8n: '#c4501b' };
  var OTHER_COLORS = ['#52606d', '#8a6d00', '#006d77', '#9b2226'];

  function colorOf(surface, i) {
    return SURFACE_COLORS[surface] || OTHER_COLORS[i % OTHER_COLORS.length];
  }

  function money(value) {
    return '$' + Number(value).toFixed(value < 1 ? 3 : 2);
  }

  function drawCharts() {
    var holder = document.getElementById('chart-data');
    if (!holder || typeof Chart === 'undefined') return;
    var data = JSON.parse(holder.textContent);
    Chart.defaults.animation = false;
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    var spendCanvas = document.getElementById('spend-chart');
    if (spendCanvas) {
      new Chart(spendCanvas, {
        type: 'bar',
        data: {
          labels: data.spend.days,
          datasets: data.spend.surfaces.map(function (s, i) {
            return { label: s.surface, data: s.usd, backgroundColor: colorOf(s.surface, i) };
          }),
        },
        options: {
          maintainAspectRatio: false,
          scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { callback: money } } },
          plugins: { tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ': ' + money(ctx.parsed.y); } } } },
        },
      });
    }
    var imagesCanvas = document.getElementById('images-chart');
    if (imagesCanvas) {
      var labels = data.images.hours.map(function (ms) {
        var iso = new Date(ms).toISOString();
        return iso.slice(5, 10) + ' ' + iso.slice(11, 13) + 'h';
      });
      var datasets = [{ type: 'bar', label: 'Images', data: data.images.images, backgroundColor: '#4752c4' }];
      if (data.images.limitPerHour) {
        datasets.push({
          type: 'line',
          label: 'Limit an hour',
          data: data.images.hours.map(function () { return data.images.limitPerHour; }),
          borderColor: '#9b2226',
          borderDash: [6, 4],
          pointRadius: 0,
          fill: false,
        });
      }
      new Chart(imagesCanvas, { data: { labels: labels, datasets: datasets }, options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true } } } });
    }
  }

  function cell(text) {
    var td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    return td;
  }

  function liveRow(job) {
    var tr = document.createElement('tr');
    tr.setAttribute('data-job', job.jobId);
    [job.since, job.who, job.where, job.what, job.reserved, job.state].forEach(function (v) { tr.appendChild(cell(v)); });
    var process = document.createElement('td');
    var code = document.createElement('code');
    code.textContent = job.process;
    process.appendChild(code);
    tr.appendChild(process);
    return tr;
  }

  function finishedRow(job) {
    var tr = document.createElement('tr');
    tr.setAttribute('data-job', job.jobId);
    tr.className = 'fresh';
    [job.when, job.who, job.where, job.what, job.cost, job.duration, job.outcome].forEach(function (v) { tr.appendChild(cell(v)); });
    var prompt = cell(job.prompt || '');
    prompt.className = 'prompt';
    tr.appendChild(prompt);
    var images = document.createElement('td');
    // The job's kept images by their number in the job (the server sends those to show): one not kept is not drawn.
    if (job.thumbs.length > 0) {
      job.thumbs.forEach(function (i) {
        var a = document.createElement('a');
        a.href = '/thumbs/' + encodeURIComponent(job.jobId) + '/' + i + '?full=1';
        var img = document.createElement('img');
        img.src = '/thumbs/' + encodeURIComponent(job.jobId) + '/' + i;
        img.alt = 'Image ' + (i + 1) + ' of the job of ' + job.when;
        img.width = 64;
        img.height = 64;
        a.appendChild(img);
        images.appendChild(a);
      });
    } else {
      images.textContent = '—';
    }
    tr.appendChild(images);
    return tr;
  }

  function emptyRow(columns, text) {
    var tr = document.createElement('tr');
    tr.className = 'empty';
    var td = cell(text);
    td.colSpan = columns;
    tr.appendChild(td);
    return tr;
  }

  function keepLive() {
    var section = document.getElementById('live');
    if (!section || typeof EventSource === 'undefined') return;
    var liveBody = document.getElementById('live-jobs');
    var recentBody = document.getElementById('recent-jobs');
    var status = document.getElementById('live-status');
    var events = new EventSource(section.getAttribute('data-events'));
    events.addEventListener('open', function () {
      section.setAttribute('data-connected', 'true');
    });
    events.addEventListener('live', function (event) {
      var jobs = JSON.parse(event.data);
      status.textContent = '';
      liveBody.replaceChildren.apply(liveBody, jobs.length ? jobs.map(liveRow) : [emptyRow(7, 'Nothing queued or running.')]);
      section.setAttribute('data-live-count', String(jobs.length));
    });
    events.addEventListener('finished', function (event) {
      var jobs = JSON.parse(event.data);
      var empty = recentBody.querySelector('tr.empty');
      if (empty) empty.remove();
      jobs.forEach(function (job) {
        var old = recentBody.querySelector('tr[data-job="' + CSS.escape(job.jobId) + '"]');
        if (old) old.remove();
        recentBody.insertBefore(finishedRow(job), recentBody.firstChild);
      });
      while (recentBody.rows.length > 100) recentBody.deleteRow(recentBody.rows.length - 1);
    });
    // The ledger did not answer the stream's first read: the stream ended, and the browser asks again in a few seconds.
    events.addEventListener('unavailable', function () {
      status.textContent = 'The ledger did not answer in time: live updates try again in a few seconds.';
    });
    events.addEventListener('busy', function () {
      status.textContent = 'Too many pages are watching the jobs: reload later for live updates.';
      events.close();
    });
    events.addEventListener('error', function () {
      section.setAttribute('data-connected', 'false');
    });
  }

  // A kept image dropped since the page was made (past the bound of kept images, the oldest go first) answers 404:
  // its thumbnail goes rather than show a broken image, and a job left with none shows the dash.
  function dropThumbnail(img) {
    var link = img.parentNode;
    if (!link || link.tagName !== 'A' || !/^\/thumbs\//.test(link.getAttribute('href') || '')) return;
    var images = link.parentNode;
    link.remove();
    if (!images.querySelector('img')) images.textContent = '—';
  }

  // An image's error does not bubble: it is caught on its way down (capture). Registered as this script runs, in the
  // head before the body is parsed (it is not deferred), so no thumbnail can fail before it listens; no image is
  // judged by `complete` and `naturalWidth`, which some browsers (Firefox) report so for a lazy one still to load.
  document.addEventListener('error', function (event) {
    if (event.target instanceof HTMLImageElement) dropThumbnail(event.target);
  }, true);

  function start() {
    drawCharts();
    keepLive();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
