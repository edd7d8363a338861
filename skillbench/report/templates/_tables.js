/* The report's one script: sortable, filterable tables. Every page's Content-Security-Policy allows exactly this
   text by its sha256 (skillbench.report._pages.table_script_hash), so no other script on a page can run. It reads
   cells' textContent and moves rows; it never parses or writes markup (nothing is assigned as HTML), so a cell
   of content under evaluation stays the escaped text it was rendered as. */
(function () {
  "use strict";
  var MISSING = ["", "–", "—", "-", "n/a", "none", "unknown"];
  var NUMBER = /^[<≤>≥~]?\s*[+\-−]?\s*\$?\s*[+\-−]?\d[\d,]*(\.\d+)?(e[+\-]?\d+)?/i;

  /* A cell's sort key: a number when the text starts with one ("+0.319 ± 0.059", "$1.20", "< 0.001",
     "6W/0T/0L"), null when it is missing ("–", "n/a", none), otherwise its lower-case text. */
  function key(cell) {
    var text = cell.textContent.trim();
    if (MISSING.indexOf(text.toLowerCase()) >= 0) { return null; }
    var m = text.match(NUMBER);
    if (m) {
      var digits = m[0].replace(/[<≤>≥~$,\s]/g, "").replace(/−/g, "-").replace(/^([+\-]?)[+\-]/, "$1");
      var n = parseFloat(digits);
      if (!isNaN(n)) { return /^[<≤]/.test(text) ? n - 1e-12 : n; }
    }
    return text.toLowerCase();
  }

  /* Missing last whichever way the column is sorted; numbers before text. */
  function compare(a, b, dir) {
    if (a === null || b === null) { return a === b ? 0 : a === null ? 1 : -1; }
    var na = typeof a === "number", nb = typeof b === "number";
    if (na !== nb) { return na ? -1 : 1; }
    return dir * (na ? a - b : a.localeCompare(b));
  }

  function headerRow(table) {
    if (table.tHead && table.tHead.rows.length) {
      var best = null, most = -1;
      for (var i = 0; i < table.tHead.rows.length; i++) {
        var row = table.tHead.rows[i], named = 0;
        for (var j = 0; j < row.cells.length; j++) { if (row.cells[j].textContent.trim()) { named++; } }
        if (named > most) { best = row; most = named; }
      }
      return best;
    }
    var first = table.rows[0];
    if (!first) { return null; }
    for (var k = 0; k < first.cells.length; k++) { if (first.cells[k].tagName !== "TH") { return null; } }
    return first;
  }

  function bodyRows(table, header) {
    var rows = [];
    for (var i = 0; i < table.tBodies.length; i++) {
      var body = table.tBodies[i].rows;
      for (var j = 0; j < body.length; j++) { if (body[j] !== header) { rows.push(body[j]); } }
    }
    return rows;
  }

  /* Only a plain grid is sorted: every row as wide as the header and no cell spanning rows (a pandas
     MultiIndex), so moving a row never tears a cell from its row. */
  function isGrid(header, rows) {
    var width = header.cells.length;
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].cells.length !== width) { return false; }
      for (var j = 0; j < width; j++) { if (rows[i].cells[j].rowSpan > 1) { return false; } }
    }
    return rows.length > 1;
  }

  function sortBy(table, header, rows, column) {
    var th = header.cells[column];
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    for (var i = 0; i < header.cells.length; i++) { header.cells[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var keyed = rows.map(function (row, index) { return [key(row.cells[column]), index, row]; });
    keyed.sort(function (a, b) { return compare(a[0], b[0], dir) || a[1] - b[1]; });
    var parent = rows[0].parentNode;
    keyed.forEach(function (k) { parent.appendChild(k[2]); });
  }

  function addFilter(table, rows) {
    var box = document.createElement("div");
    box.className = "sb-filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "filter rows (family, model, arm, verdict…)";
    input.setAttribute("aria-label", "filter this table's rows");
    var count = document.createElement("span");
    count.className = "sb-count";
    box.appendChild(input);
    box.appendChild(count);
    table.parentNode.insertBefore(box, table);
    input.addEventListener("input", function () {
      var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
      rows.forEach(function (row) {
        var text = row.textContent.toLowerCase();
        var keep = terms.every(function (t) { return text.indexOf(t) >= 0; });
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      count.textContent = terms.length ? shown + " of " + rows.length + " rows" : "";
    });
  }

  function enhance(table) {
    var header = headerRow(table);
    if (!header) { return; }
    var rows = bodyRows(table, header);
    if (!isGrid(header, rows)) { return; }
    table.classList.add("sb-sortable");
    Array.prototype.forEach.call(header.cells, function (th, column) {
      th.tabIndex = 0;
      th.title = "sort by this column";
      th.addEventListener("click", function () { sortBy(table, header, rows, column); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, header, rows, column); }
      });
    });
    if (rows.length >= 5) { addFilter(table, rows); }
  }

  function start() { Array.prototype.forEach.call(document.querySelectorAll("table"), enhance); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
}());
