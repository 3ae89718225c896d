// Placeholder: this module is filled in by its issue.
