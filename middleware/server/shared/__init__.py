"""State shared by every worker and host of one service, kept in Redis."""
