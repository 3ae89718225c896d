print("felica-sim")
