"""The Learn page's content as data: its presets, the comparison of formulations and the root LP
drawn, and the paper's MIO solved live."""
