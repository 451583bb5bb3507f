from strongtree_core.command import run

run()
