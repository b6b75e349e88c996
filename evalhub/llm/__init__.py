"""Model access: chat clients and log-probability scorers, with no Django import."""
