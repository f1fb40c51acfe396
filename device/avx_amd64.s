#include "textflag.h"

// func vzeroupper()
TEXT ·vzeroupper(SB), NOSPLIT|NOFRAME, $0-0
	VZEROUPPER
	RET
