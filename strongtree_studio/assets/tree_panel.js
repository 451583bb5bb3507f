// Tree panels at presentation size (strongtree_studio/treechart.py): the panel opens with the
// root of the tree in view, and a drag of the mouse moves the tree (the scrollbars still work).
// Installed once per page; it only reads and scrolls the panels, it fetches nothing.
(function () {
  if (window.__strongtreePanels) return;
  window.__strongtreePanels = true;
  var PANELS = '[class*="st-key-stree-natural-"] [data-testid="stGraphVizChart"], ' +
               '[class*="st-key-stree-large-"] [data-testid="stGraphVizChart"]';

  function rootInView(panel) {
    var svg = panel.querySelector("svg");
    if (!svg) return;
    var root = svg.querySelector("g.node");  // the first node of the DOT is the root
    var layout = (svg.getAttribute("viewBox") || "") + "|" + (root ? root.textContent : "");
    if (!root || panel.dataset.streeLayout === layout) return;  // same drawing: keep where the user scrolled
    panel.dataset.streeLayout = layout;
    var box = root.getBoundingClientRect(), frame = panel.getBoundingClientRect();
    panel.scrollLeft += box.left + box.width / 2 - (frame.left + frame.width / 2);
    panel.scrollTop = 0;
  }

  function scan() {
    document.querySelectorAll(PANELS).forEach(function (panel) {
      rootInView(panel);
      if (panel.dataset.streeDrag) return;
      panel.dataset.streeDrag = "1";
      panel.style.cursor = "grab";
      var start = null;
      panel.addEventListener("pointerdown", function (e) {
        if (e.button !== 0 || e.target.closest("button")) return;
        start = {x: e.clientX, y: e.clientY, left: panel.scrollLeft, top: panel.scrollTop};
        panel.style.cursor = "grabbing";
      });
      window.addEventListener("pointermove", function (e) {
        if (!start) return;
        panel.scrollLeft = start.left - (e.clientX - start.x);
        panel.scrollTop = start.top - (e.clientY - start.y);
      });
      window.addEventListener("pointerup", function () {
        start = null;
        panel.style.cursor = "grab";
      });
    });
  }

  new MutationObserver(scan).observe(document.body, {childList: true, subtree: true, attributes: true,
                                                     attributeFilter: ["viewBox"]});
  scan();
})();
