"""Op records: one table per module, gathered by `tests/test_op_records.py`."""
