print("felica")
