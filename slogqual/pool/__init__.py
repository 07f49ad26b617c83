"""Pool scenarios: throwaway pools with the candidate as SLOG, loads that issue sync writes, evidence."""
