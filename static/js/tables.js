// Sortable and filterable tables: <table class="sortable"> sorts on a header click (numbers by
// value, cells may carry data-sort); <input data-filter="table-id"> hides rows without the text.
(function () {
  function key(cell) {
    const marked = cell.querySelector("[data-sort]");
    const raw = cell.dataset.sort ?? (marked ? marked.dataset.sort : cell.textContent.trim());
    const number = parseFloat(raw);
    return isNaN(number) || !/^[-+]?[\d.]/.test(raw) ? raw.toLowerCase() : number;
  }
  function sort(table, index, header) {
    const body = table.tBodies[0];
    const descending = header.getAttribute("aria-sort") !== "descending";
    table.querySelectorAll("th[aria-sort]").forEach((th) => th.removeAttribute("aria-sort"));
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const rows = Array.from(body.rows).filter((row) => row.cells.length > index);
    rows.sort((a, b) => {
      const x = key(a.cells[index]), y = key(b.cells[index]);
      const order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === "number" ? -1 : 1;
      return descending ? -order : order;
    });
    rows.forEach((row) => body.appendChild(row));
  }
  function wire(root) {
    root.querySelectorAll("table.sortable thead th").forEach((header) => {
      if (header.dataset.wired) return;
      header.dataset.wired = "1";
      header.tabIndex = 0;
      header.title = "Sort by this column";
      const table = header.closest("table");
      const go = () => sort(table, header.cellIndex, header);
      header.addEventListener("click", go);
      header.addEventListener("keydown", (event) => { if (event.key === "Enter") go(); });
    });
    root.querySelectorAll("input[data-filter]").forEach((input) => {
      if (input.dataset.wired) return;
      input.dataset.wired = "1";
      input.addEventListener("input", () => {
        const table = document.getElementById(input.dataset.filter);
        const text = input.value.trim().toLowerCase();
        Array.from(table.tBodies[0].rows).forEach((row) => {
          row.hidden = text !== "" && !row.textContent.toLowerCase().includes(text);
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", () => wire(document));
  document.addEventListener("htmx:afterSettle", (event) => wire(event.target));
})();
