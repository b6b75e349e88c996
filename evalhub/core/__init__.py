"""Pure evaluation logic: no Django, no model access. Usable as a library."""
