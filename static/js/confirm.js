// Destructive plain forms ask first: <form data-confirm="…">. (htmx forms use hx-confirm.)
document.addEventListener("submit", (event) => {
  const message = event.target.dataset && event.target.dataset.confirm;
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});
