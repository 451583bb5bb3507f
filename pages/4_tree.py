from strongtree_studio.page import show

show("tree")
