"""The benchmark protocol: a resumable run matrix, final evaluation, and the report."""
