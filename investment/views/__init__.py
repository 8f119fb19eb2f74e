"""The investment pages: proposals and the scoring model, scenarios, and a scenario's export."""
