/* placeholder: replaced by the module */
#ifndef T2EXP_DATA_H
#define T2EXP_DATA_H
#endif
