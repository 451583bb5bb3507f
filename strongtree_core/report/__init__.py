"""What a review board reads: the models a tree is compared with, the cost of fairness in one
number, and the self-contained HTML report (:mod:`strongtree_core.report.html`), made the same
way from the dashboard and from ``strongtree report``."""
