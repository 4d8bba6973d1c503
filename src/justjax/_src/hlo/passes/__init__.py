"""The optimizing middle end: passes over `ir.Module`s (issue #8, DESIGN.md "Compiler")."""
