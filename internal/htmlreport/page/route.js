// This file shows the view the URL fragment names, and starts the page.
// The page is driven by its fragment: "" is the overview, "f=IDX" the
// function with wasm function index IDX, "f=IDX&p=ID" the same with its
// path ID selected, "run=I" the run with input index I. Links and clicks only change the fragment, so every
// view can be bookmarked and the back button works.

function route() {
  const {f, p, run} = parseHash();
  const row = f === null ? undefined : rowOf.get(f);
  if (run !== null && OV.inputs && OV.inputs[Number(run)]) {
    cur = null;
    showRun(Number(run));
    document.body.dataset.view = 'run';
    document.body.dataset.ready = '1';
    return;
  }
  if (row === undefined) {
    cur = null;
    showOverview();
  } else {
    showFunction(row, p);
  }
  document.body.dataset.view = row === undefined ? 'overview' : 'function';
  document.body.dataset.ready = '1';
}
window.addEventListener('hashchange', route);
route();
