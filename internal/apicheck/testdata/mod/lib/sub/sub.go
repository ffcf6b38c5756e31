package sub

func Sub() {}
