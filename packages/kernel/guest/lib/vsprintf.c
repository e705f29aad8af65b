// SPDX-License-Identifier: MIT
/*
 * A small vsnprintf: %d %i %u %x %X %o %c %s %p %%, the l/ll/z/h length
 * modifiers, a field width (or *), and the '-' and '0' flags. No floating
 * point: the kernel is built without SSE/x87.
 */
#include <linux/kernel.h>

struct out {
	char *buf;
	size_t size;
	size_t len;	/* what the full output would need, as snprintf returns */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_field(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left)
		while (fill-- > 0)
			put(o, pad);
	while (n--)
		put(o, *s++);
	if (left)
		while (fill-- > 0)
			put(o, ' ');
}

static void put_number(struct out *o, unsigned long v, bool negative, unsigned int base,
		       bool upper, int width, bool left, char pad)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = digits[v % base];
		v /= base;
	} while (v);
	if (negative) {
		if (pad == '0' && width > 0) {	/* the sign goes before the zeros */
			put(o, '-');
			width--;
		} else {
			tmp[--i] = '-';
		}
	}
	put_field(o, &tmp[i], sizeof(tmp) - i, width, left, pad);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		bool left = false, is_signed = false, upper = false;
		char pad = ' ';
		int width = 0, lng = 0;
		unsigned int base = 10;
		unsigned long v;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {		/* flags */
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				pad = '0';
			else
				break;
		}
		if (*fmt == '*') {		/* width */
			width = va_arg(args, int);
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (*fmt++ - '0');
		}
		while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h') {	/* length */
			if (*fmt != 'h')
				lng++;
			fmt++;
		}

		switch (*fmt) {
		case 'c':
			put_field(&o, &(char){ (char)va_arg(args, int) }, 1, width, left, ' ');
			continue;
		case 's': {
			const char *s = va_arg(args, const char *);

			if (!s)
				s = "(null)";
			put_field(&o, s, strlen(s), width, left, ' ');
			continue;
		}
		case 'p':
			v = (unsigned long)va_arg(args, void *);
			put(&o, '0');
			put(&o, 'x');
			put_number(&o, v, false, 16, false, 16, false, '0');
			continue;
		case '%':
			put(&o, '%');
			continue;
		case 'd':
		case 'i':
			is_signed = true;
			break;
		case 'u':
			break;
		case 'X':
			upper = true;
			/* fall through */
		case 'x':
			base = 16;
			break;
		case 'o':
			base = 8;
			break;
		case '\0':
			fmt--;
			continue;
		default:	/* unknown: print it as it is */
			put(&o, '%');
			put(&o, *fmt);
			continue;
		}

		if (lng)
			v = va_arg(args, unsigned long);
		else if (is_signed)
			v = (unsigned long)(long)va_arg(args, int);
		else
			v = va_arg(args, unsigned int);

		if (is_signed && (long)v < 0)
			put_number(&o, -v, true, base, upper, width, left, pad);
		else
			put_number(&o, v, false, base, upper, width, left, pad);
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int n;

	va_start(args, fmt);
	n = vsnprintf(buf, size, fmt, args);
	va_end(args);
	return n;
}
