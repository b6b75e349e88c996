// Keyboard rating: a digit chooses that score, Ctrl+Enter submits and loads the next response, s skips,
// ? helps. On the document, so it keeps working after htmx swaps in the next response.
document.addEventListener("keydown", (event) => {
  const form = document.getElementById("score-form");
  if (!form) return;
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    form.requestSubmit();
    return;
  }
  if (event.target.matches("textarea, input[type=text], select") || event.ctrlKey || event.metaKey || event.altKey) return;
  const choice = /^[0-9]$/.test(event.key) && form.querySelector(`input[name=score][value="${event.key}"]`);
  if (choice) {
    choice.checked = true;
    choice.focus();
    event.preventDefault();
  } else if (event.key === "s") {
    document.getElementById("skip-form")?.requestSubmit();
  } else if (event.key === "?") {
    const help = document.getElementById("shortcuts");
    if (help) { help.open ? help.close() : help.showModal(); }
  }
});
