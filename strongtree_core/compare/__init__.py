"""Formulations compared on one table: their trees and their root LP relaxations (the Learn page)."""
