"""Evidence reports: export, signatures and independent verification."""
